import { Controller, Get } from '@nestjs/common';
import { Public } from '../common/public.decorator';
import { type DeploymentView, HealthBoard } from './health-board';

/** Breaker state of every deployment; public like the other health probes. */
@Controller('health')
@Public()
export class UpstreamsHealthController {
  constructor(private readonly board: HealthBoard) {}

  @Get('upstreams')
  upstreams(): { deployments: DeploymentView[] } {
    return { deployments: this.board.views() };
  }
}
