import { Controller, Get } from '@nestjs/common';
import { GatewayError } from '../common/errors/gateway-errors';
import { Public } from '../common/public.decorator';
import { CatalogService } from '../catalog/catalog.service';
import { ShutdownState } from './shutdown.state';

/** Liveness and readiness probes; public. */
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly catalog: CatalogService,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get()
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready while the catalog is loaded and the process is not draining. */
  @Get('ready')
  ready(): { status: 'ready'; models: number } {
    if (this.shutdown.draining) {
      throw new GatewayError(503, 'overloaded', 'The gateway is shutting down.', {
        code: 'shutting_down',
      });
    }
    return { status: 'ready', models: this.catalog.size };
  }
}
