import { Allow } from 'class-validator';

/**
 * The query of `/flags` and `/decide`: the protocol version `v`, the project `token` when the body has none,
 * and the body's `compression`, as the SDK sends them (checked by the service; documented on the handlers).
 */
export class FlagsQueryDto {
  @Allow() v?: unknown;
  @Allow() token?: unknown;
  @Allow() compression?: unknown;
}
