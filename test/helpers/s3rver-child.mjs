// s3rver in a process of its own: node --openssl-legacy-provider test/helpers/s3rver-child.mjs DIR BUCKET
// (its list continuation tokens are DES-encrypted, which OpenSSL 3 only offers through the legacy provider).
// Prints {"port":N} once it listens on a free loopback port.
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket }],
});
const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
