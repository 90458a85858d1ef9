import * as http from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

/**
 * Nest's express adapter, with node's request and response objects built as express's own.
 * Express hands every request its prototypes with Object.setPrototypeOf, and V8 gives
 * each object whose prototype changes a hidden class of its own: two per request, ~2.5 KB
 * per open stream, and every read of a req or res property megamorphic. Here node builds
 * them from classes whose prototypes are express's request and response, so that call
 * changes nothing and all requests share their hidden classes. HTTPS and
 * forceCloseConnections keep Nest's own server.
 */
export class GatewayExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions !== undefined || options?.forceCloseConnections === true) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    // Named as node's own classes, for stack traces and heap snapshots.
    const IncomingMessage = standIn(
      class IncomingMessage extends http.IncomingMessage {},
      app.request,
    );
    const ServerResponse = standIn(
      class ServerResponse extends http.ServerResponse {},
      app.response,
    );
    app.request = IncomingMessage.prototype as unknown as Express['request'];
    app.response = ServerResponse.prototype as unknown as Express['response'];
    this.httpServer = http.createServer({ IncomingMessage, ServerResponse }, app);
  }
}

/**
 * `derived`, a subclass of node's class, made to stand in for express's `prototype`: its
 * prototype gets the same parent and the same own properties (express's `app`). A class,
 * not a function with `prototype` assigned: V8 shares the hidden class of a derived
 * class's instances, and gave each instance of the latter its own.
 */
function standIn<T extends abstract new (...args: never[]) => object>(
  derived: T,
  prototype: object,
): T {
  Object.setPrototypeOf(derived.prototype, Object.getPrototypeOf(prototype) as object);
  for (const key of Reflect.ownKeys(prototype)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(prototype, key);
    if (descriptor !== undefined) {
      Reflect.defineProperty(derived.prototype as object, key, descriptor);
    }
  }
  return derived;
}
