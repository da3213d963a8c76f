// Every URL that is described, logged or put in an error goes through here first: credentials in it (a static host
// behind basic auth, https://user:token@host/; a Redis password; a presigned URL's signature) never reach a terminal
// or a log. One place, low in the tree, so the gateway, the stores, the publication readers and the commands agree.

/** Query option names whose values are secrets (?password=, ?token=, X-Amz-Signature, ?api_key=...). */
const SECRET_OPTION = /pass|secret|token|signature|credential|key$|^key|auth/i;

/**
 * The URL with its credentials masked: the password of the userinfo (`redis://user:***@host`), a userinfo that is a
 * user name alone (`https://***@host`: tokens are often given that way), and query options named like secrets. A
 * string that is not a URL is masked by pattern.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    else if (u.username) u.username = '***';
    for (const name of [...u.searchParams.keys()]) if (SECRET_OPTION.test(name)) u.searchParams.set(name, '***');
    return u.toString();
  } catch {
    // Not parsable: a userinfo here may hold spaces, which free text would take for the end of a URL.
    return redactUrls(url.replace(/\/\/[^@/]*@/, '//***@'));
  }
}

/**
 * Free text (an error message, a log line) with the credentials of every URL in it masked, whatever library wrote
 * it: `scheme://user:pw@` and `scheme://user@` become `scheme://user:***@` and `scheme://***@`, and secret-looking
 * query options lose their values.
 */
export function redactUrls(text: string): string {
  if (!text.includes('://')) return text;
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)([^\s@/?#"'<>]*)@/gi, (_, scheme: string, info: string) => {
      const colon = info.indexOf(':');
      return `${scheme}${colon >= 0 ? `${info.slice(0, colon)}:***` : '***'}@`;
    })
    .replace(/([?&])([^=&\s"'<>#]+)=([^&\s"'<>#]*)/g, (all, sep: string, name: string) =>
      SECRET_OPTION.test(name) ? `${sep}${name}=***` : all,
    );
}
