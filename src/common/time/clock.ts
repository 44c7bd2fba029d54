import { Injectable } from '@nestjs/common';

/** The time source of the service. Tests replace it (`overrideProvider(Clock)`) instead of sleeping. */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }
}

/** A clock the tests set by hand. */
export class FixedClock extends Clock {
  constructor(private current: Date) {
    super();
  }

  override now(): Date {
    return new Date(this.current.getTime());
  }

  set(date: Date): void {
    this.current = date;
  }

  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
