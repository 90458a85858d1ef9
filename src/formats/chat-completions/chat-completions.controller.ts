import { Body, Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import { Generation } from '../shared/generation.guard';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { ChatCompletionsService } from './chat-completions.service';
import { chatGeneration } from './chat.generation';

/** OpenAI Chat Completions: `POST /v1/chat/completions`, every catalog model. */
@Controller('v1/chat')
@UseFilters(OpenAiExceptionFilter)
export class ChatCompletionsController {
  constructor(private readonly service: ChatCompletionsService) {}

  @Post('completions')
  @HttpCode(200)
  @Generation(chatGeneration)
  create(
    // Validated in place by the generation guard.
    @Body() body: ChatCompletionRequestDto,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.service.handle(body, req, res);
  }
}
