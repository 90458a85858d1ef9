import {
  Body,
  Controller,
  HttpCode,
  PipeTransform,
  Post,
  Req,
  Res,
  UseFilters,
} from '@nestjs/common';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { Generation } from '../shared/generation.guard';
import type { CountTokensRequestDto, MessagesRequestDto } from './messages-request.dto';
import { validateCountTokensRequest } from './messages-request.validation';
import { GenerationPipeline } from '../shared/generation.pipeline';
import { CountTokensService } from './count-tokens.service';
import { messagesFormat } from './messages.format';
import { Planned, type RequestPlan } from '../shared/request-plan';

class CountTokensRequestPipe implements PipeTransform<unknown, CountTokensRequestDto> {
  transform(value: unknown): CountTokensRequestDto {
    return validateCountTokensRequest(value);
  }
}

/**
 * Anthropic Messages: `POST /v1/messages` and `POST /v1/messages/count_tokens`, served at
 * the root the Anthropic SDKs use (`?beta=true`, sent by `client.beta.*`, is ignored).
 * Every error here, the global auth guard's included, uses the Anthropic envelope.
 */
@Controller(messagesFormat.path)
@UseFilters(messagesFormat.filter)
export class MessagesController {
  constructor(
    private readonly pipeline: GenerationPipeline,
    private readonly counter: CountTokensService,
  ) {}

  @Post()
  @HttpCode(200)
  @Generation(messagesFormat)
  create(
    @Planned() plan: RequestPlan<MessagesRequestDto>,
    // The pipeline writes the answer (plan.res): declared so that Nest sends nothing itself.
    @Res() _res: GatewayResponse,
  ): Promise<void> {
    return this.pipeline.serve(plan);
  }

  /** No system-prompt rule here: counting generates nothing, and `system` is optional. */
  @Post('count_tokens')
  @HttpCode(200)
  countTokens(
    @Body(new CountTokensRequestPipe()) body: CountTokensRequestDto,
    @Req() req: GatewayRequest,
    @Res({ passthrough: true }) res: GatewayResponse,
  ): Promise<unknown> {
    return this.counter.countTokens(body, req, res);
  }
}
