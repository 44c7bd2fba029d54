import { type CallHandler, type ExecutionContext, Injectable, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { map, type Observable } from 'rxjs';
import { AppConfig } from '../../config/config.js';
import {
  type Page,
  type PageParams,
  parsePageNumberParams,
  parsePageParams,
  toEnvelope,
  toPageNumberEnvelope,
} from './page.js';
import { HAS_NEXT_KEY, PAGE_NUMBER_PAGINATED_KEY, PAGINATED_KEY } from './paginated.decorator.js';

/** The absolute URL of a request; scheme and host honour X-Forwarded-* only when TRUST_PROXY is set. */
export function requestUrl(req: Request): URL {
  return new URL(req.originalUrl, `${req.protocol}://${req.host}`);
}

/** What a handler declares about its list: `@PageNumberPaginated` (its default limit), `@Paginated`, has_next. */
interface Listing {
  pageNumberDefault: number | undefined;
  paginated: boolean;
  hasNext: boolean;
}

/**
 * For handlers marked `@Paginated`: validates `limit`/`offset` before the handler runs (400 with `attr`), then
 * wraps the returned `Page<T>` in the list envelope with absolute `next`/`previous` links. For handlers marked
 * `@PageNumberPaginated`: the same with `page`/`limit` and PostHog's `{results, next, previous, total_count}`.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  /** What each handler declares, read from its decorators once (they do not change once the application runs). */
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- route handlers
  private readonly listings = new WeakMap<Function, Listing>();

  constructor(
    private readonly reflector: Reflector,
    private readonly config: AppConfig,
  ) {}

  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- a route handler
  private listingOf(handler: Function): Listing {
    let listing = this.listings.get(handler);
    if (!listing) {
      listing = {
        pageNumberDefault: this.reflector.get<number | undefined>(PAGE_NUMBER_PAGINATED_KEY, handler),
        paginated: Boolean(this.reflector.get<boolean | undefined>(PAGINATED_KEY, handler)),
        hasNext: this.reflector.get<boolean | undefined>(HAS_NEXT_KEY, handler) === true,
      };
      this.listings.set(handler, listing);
    }
    return listing;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const { pageNumberDefault, paginated, hasNext } = this.listingOf(context.getHandler());
    if (pageNumberDefault !== undefined) {
      const req = context.switchToHttp().getRequest<Request & { pageParams?: PageParams }>();
      const params = parsePageNumberParams(
        req.query as Record<string, unknown>,
        this.config.get('MAX_PAGE_LIMIT'),
        pageNumberDefault,
      );
      req.pageParams = params;
      return next
        .handle()
        .pipe(map((page: Page<unknown>) => toPageNumberEnvelope(page, params, requestUrl(req))));
    }
    if (!paginated) return next.handle();
    const req = context.switchToHttp().getRequest<Request & { pageParams?: PageParams }>();
    const params = parsePageParams(req.query as Record<string, unknown>, this.config.get('MAX_PAGE_LIMIT'));
    req.pageParams = params;
    return next.handle().pipe(
      map((page: Page<unknown>) => {
        const envelope = toEnvelope(page, params, requestUrl(req));
        return hasNext ? { ...envelope, has_next: envelope.next !== null } : envelope;
      }),
    );
  }
}
