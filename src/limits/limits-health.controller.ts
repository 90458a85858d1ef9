import { Controller, Get } from '@nestjs/common';
import { Public } from '../common/public.decorator';
import { LimitsHealth, type LimitsHealthSnapshot } from './limits-health';

/** `GET /health/limits`: rate-limit storage and its failure counters (public, like /health). */
@Controller('health')
@Public()
export class LimitsHealthController {
  constructor(private readonly health: LimitsHealth) {}

  @Get('limits')
  limits(): LimitsHealthSnapshot {
    return this.health.snapshot();
  }
}
