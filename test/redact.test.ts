// src/redact.ts: credentials in any URL that is described, logged or put in an error, and the CLI's error line.
import { describe, expect, it } from 'vitest';
import { redactUrl, redactUrls } from '../src/redact.js';
import { ensureCompiled, runCli } from './helpers/cli.js';

describe('redactUrl()', () => {
  it('hides a password in the userinfo or in a query option, and keeps the rest', () => {
    expect(redactUrl('redis://:s3cret@127.0.0.1:6399/0')).toBe('redis://:***@127.0.0.1:6399/0');
    expect(redactUrl('redis://user:s3cret@h:1?prefix=p')).toBe('redis://user:***@h:1?prefix=p');
    expect(redactUrl('redis://h:1?password=s3cret&prefix=p')).toBe('redis://h:1?password=***&prefix=p');
    expect(redactUrl('redis://:s3c ret@h:notaport?password=s3cret')).not.toContain('s3c');
    expect(redactUrl('sqlite:var/gateway.db')).toBe('sqlite:var/gateway.db');
  });
  it('covers http(s) and every other scheme: basic auth, a token as the user name, signed query options', () => {
    expect(redactUrl('https://user:t0ken@static.example/api/')).toBe('https://user:***@static.example/api/');
    expect(redactUrl('https://ghp_t0ken@static.example/')).toBe('https://***@static.example/');
    expect(redactUrl('s3://bucket/p?X-Amz-Signature=abc&X-Amz-Credential=AKIA&x=1')).toBe(
      's3://bucket/p?X-Amz-Signature=***&X-Amz-Credential=***&x=1',
    );
    expect(redactUrl('file:///srv/pub/')).toBe('file:///srv/pub/');
    expect(redactUrl('https://cdn.example/api/?v=2')).toBe('https://cdn.example/api/?v=2');
  });
});

describe('redactUrls()', () => {
  it('masks every URL inside free text, as libraries write them into their errors', () => {
    expect(redactUrls('GET https://u:p4ss@h.example/current.json: 401; then redis://:pw@r:6379/0 refused')).toBe(
      'GET https://u:***@h.example/current.json: 401; then redis://:***@r:6379/0 refused',
    );
    expect(redactUrls('fetch "https://t0k@h/x?token=abc&page=2" failed')).toBe(
      'fetch "https://***@h/x?token=***&page=2" failed',
    );
    expect(redactUrls('no URL here: a@b, ?token=x')).toBe('no URL here: a@b, ?token=x');
  });
});

describe('the CLI', () => {
  it('never prints the password of an origin URL in its error line', async () => {
    ensureCompiled();
    const r = await runCli(['serve', '--origin', 'https://user:t0ken-s3cret@127.0.0.1:1/api/', '--store', 'memory:']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('https://user:***@127.0.0.1:1/api/');
    expect(r.stderr + r.stdout).not.toContain('t0ken-s3cret');
  });
});
