import {
  Injectable,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  RequestMethod,
} from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AuthModule } from '../auth/auth.module';
import { CatalogModule } from '../catalog/catalog.module';
import { ConsoleSessionModule } from '../console/console-session.module';
import { AdminAuditController } from './admin-audit.controller';
import { AdminKeysController } from './admin-keys.controller';
import { AdminSessionsController } from './admin-sessions.controller';
import { AdminModelsController } from './admin-models.controller';
import { AdminTeamsController } from './admin-teams.controller';
import { AdminUsageController } from './admin-usage.controller';
import { AdminAuth } from '../console/admin-auth';
import { AdminGuard } from './admin.guard';
import { KeySelfController } from './key-self.controller';

/**
 * Reads admin request bodies. The gateway's own body parser runs only for a valid client
 * key (bootstrap.ts); here the admin token or a console session plays that part, so an anonymous caller still
 * cannot make the gateway buffer a body.
 */
@Injectable()
class AdminBodyParser {
  private readonly json = express.json({ limit: '1mb', type: () => true });

  constructor(private readonly auth: AdminAuth) {}

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    if (req.body === undefined && (await this.auth.principal(req, res)) !== undefined) {
      await new Promise<void>((resolve, reject) =>
        // body-parser's errors are Errors with an HTTP status; the filters render them.
        this.json(req, res, (err?: Error) => (err ? reject(err) : resolve())),
      );
    }
    next();
  }
}

/** The admin API (/admin/v1) and the key self-inspection route (GET /v1/key). */
@Module({
  imports: [AuthModule, CatalogModule, ConsoleSessionModule],
  controllers: [
    AdminKeysController,
    AdminUsageController,
    AdminModelsController,
    AdminAuditController,
    AdminSessionsController,
    AdminTeamsController,
    KeySelfController,
  ],
  providers: [AdminGuard, AdminBodyParser],
})
export class AdminModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(AdminBodyParser).forRoutes({ path: 'admin/*path', method: RequestMethod.ALL });
  }
}
