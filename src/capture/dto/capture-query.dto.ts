import { Allow } from 'class-validator';

/**
 * The query of `POST /s/`: `compression` (gzip, gzip-js, base64) says how the body is encoded, as posthog-js
 * sends it; any other value, or none, lets the body's own bytes decide. Documented on the handler.
 */
export class CaptureQueryDto {
  @Allow() compression?: unknown;
}
