import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'gateway:isPublic';

/** Marks a route that needs no client key (health probes). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
