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
import { chatLimitFacts } from '../../limits/extractors/chat.limits';
import { RequestLimits } from '../../limits/request-limits.guard';
import { chatProtections } from '../../policy/protections/extractors/chat.protections';
import { Protections } from '../../policy/protections/protections.guard';
import { RequireSystemPrompt, SystemPromptGuard } from '../../policy/system-prompt.guard';
import { chatSystemPrompt } from '../../policy/system-prompt.rule';
import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import { ChatCompletionRequestDto } from './chat-request.dto';
import { validateChatRequest } from './chat-request.validation';
import { ChatCompletionsService } from './chat-completions.service';

/** Validates the body in place (no copy) and types it. */
class ChatRequestPipe implements PipeTransform<unknown, ChatCompletionRequestDto> {
  transform(value: unknown): ChatCompletionRequestDto {
    return validateChatRequest(value);
  }
}

/** OpenAI Chat Completions: `POST /v1/chat/completions`, every catalog model. */
@Controller('v1/chat')
@UseFilters(OpenAiExceptionFilter)
export class ChatCompletionsController {
  constructor(private readonly service: ChatCompletionsService) {}

  @Post('completions')
  @HttpCode(200)
  @RequestLimits(chatLimitFacts)
  @Protections(chatProtections)
  @RequireSystemPrompt(chatSystemPrompt)
  @UseGuards(SystemPromptGuard)
  create(
    @Body(new ChatRequestPipe()) body: ChatCompletionRequestDto,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.service.handle(body, req, res);
  }
}
