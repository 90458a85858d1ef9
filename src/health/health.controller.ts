import { Controller, Get, HttpException, HttpStatus } from '@nestjs/common';
import { Public } from '../auth/public.decorator';
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
      throw new HttpException('shutting down', HttpStatus.SERVICE_UNAVAILABLE);
    }
    return { status: 'ready', models: this.catalog.size };
  }
}
