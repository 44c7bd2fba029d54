import { createHash, createHmac } from 'node:crypto';

/** What a presigned GET needs: where the object is, who signs, for how long. */
export interface PresignRequest {
  /** The object's URL without a query (path-style on an endpoint, virtual-hosted on AWS). */
  url: URL;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  expiresSeconds: number;
  now: Date;
  /** Extra query parameters signed with the rest (`response-content-disposition`). */
  query?: Record<string, string>;
}

/** RFC 3986 encoding, as SigV4 wants it: everything but unreserved characters, `!'()*` included. */
const encode = (value: string) =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();

/**
 * A presigned GET URL (AWS Signature Version 4, query parameters, `UNSIGNED-PAYLOAD`), as the AWS SDK's presigner
 * makes one: anyone holding it may read that one object until it expires, without credentials of their own.
 */
export function presignGetUrl(req: PresignRequest): string {
  const amzDate = req.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const credentialScope = `${day}/${req.region}/s3/aws4_request`;
  const params: Record<string, string> = {
    ...req.query,
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': `${req.credentials.accessKeyId}/${credentialScope}`,
    'X-Amz-Date': amzDate,
    'X-Amz-Expires': String(req.expiresSeconds),
    'X-Amz-SignedHeaders': 'host',
    ...(req.credentials.sessionToken ? { 'X-Amz-Security-Token': req.credentials.sessionToken } : {}),
  };
  const canonicalQuery = Object.keys(params)
    .sort()
    .map((k) => `${encode(k)}=${encode(params[k])}`)
    .join('&');
  // The path as sent: each segment encoded once (S3 does not encode twice).
  const path = req.url.pathname
    .split('/')
    .map((segment) => encode(decodeURIComponent(segment)))
    .join('/');
  const canonicalRequest = [
    'GET',
    path,
    canonicalQuery,
    `host:${req.url.host}\n`,
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    credentialScope,
    createHash('sha256').update(canonicalRequest, 'utf8').digest('hex'),
  ].join('\n');
  const key = ['s3', 'aws4_request'].reduce(
    (k, part) => hmac(k, part),
    hmac(hmac(`AWS4${req.credentials.secretAccessKey}`, day), req.region),
  );
  const signature = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  return `${req.url.origin}${path}?${canonicalQuery}&X-Amz-Signature=${signature}`;
}
