// Store URLs go into messages (a store out of reach, an unknown key id): never with their secrets.

/** The URL without its password, whether in the userinfo (redis://:pw@host) or in a query option (?password=pw). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const name of [...u.searchParams.keys()]) if (/pass|secret|token/i.test(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@').replace(/([?&][^=&]*(?:pass|secret|token)[^=&]*=)[^&]*/gi, '$1***');
  }
}
