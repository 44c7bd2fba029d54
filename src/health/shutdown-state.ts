import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';

/** Set when the process starts shutting down, so readiness fails at once and load balancers stop routing. */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  draining = false;

  beforeApplicationShutdown(): void {
    this.draining = true;
  }
}
