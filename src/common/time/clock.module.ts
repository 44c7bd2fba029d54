import { Global, Module } from '@nestjs/common';
import { Clock } from './clock.js';

/** The clock every module may inject (tests replace it with `overrideProvider(Clock)`). */
@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
