import {
  Body,
  Controller,
  HttpCode,
  PipeTransform,
  Post,
  Req,
  Res,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { messagesLimitFacts } from '../../limits/extractors/messages.limits';
import { RequestLimits } from '../../limits/request-limits.guard';
import { messagesProtections } from '../../policy/protections/extractors/messages.protections';
import { Protections } from '../../policy/protections/protections.guard';
import { RequireSystemPrompt, SystemPromptGuard } from '../../policy/system-prompt.guard';
import { messagesSystemPrompt } from '../../policy/system-prompt.rule';
import { AnthropicExceptionFilter } from './anthropic-exception.filter';
import type { CountTokensRequestDto, MessagesRequestDto } from './messages-request.dto';
import { validateCountTokensRequest, validateMessagesRequest } from './messages-request.validation';
import { MessagesService } from './messages.service';

/** Validates a Messages body in place (no copy) and types it. */
class MessagesRequestPipe implements PipeTransform<unknown, MessagesRequestDto> {
  transform(value: unknown): MessagesRequestDto {
    return validateMessagesRequest(value);
  }
}

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
@Controller('v1/messages')
@UseFilters(AnthropicExceptionFilter)
export class MessagesController {
  constructor(private readonly service: MessagesService) {}

  @Post()
  @HttpCode(200)
  @RequestLimits(messagesLimitFacts)
  @Protections(messagesProtections)
  @RequireSystemPrompt(messagesSystemPrompt)
  @UseGuards(SystemPromptGuard)
  create(
    @Body(new MessagesRequestPipe()) body: MessagesRequestDto,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.service.handle(body, req, res);
  }

  /** No system-prompt rule here: counting generates nothing, and `system` is optional. */
  @Post('count_tokens')
  @HttpCode(200)
  countTokens(
    @Body(new CountTokensRequestPipe()) body: CountTokensRequestDto,
    @Req() req: GatewayRequest,
    @Res({ passthrough: true }) res: GatewayResponse,
  ): Promise<unknown> {
    return this.service.countTokens(body, req, res);
  }
}
