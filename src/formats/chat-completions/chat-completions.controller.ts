import { Body, Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import { Generation } from '../shared/generation.guard';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { GenerationPipeline } from '../shared/generation.pipeline';
import { chatAdapter } from './chat.adapter';

/** OpenAI Chat Completions: `POST /v1/chat/completions`, every catalog model. */
@Controller('v1/chat')
@UseFilters(OpenAiExceptionFilter)
export class ChatCompletionsController {
  constructor(private readonly pipeline: GenerationPipeline) {}

  @Post('completions')
  @HttpCode(200)
  @Generation(chatAdapter)
  create(
    // Validated in place by the generation guard.
    @Body() body: ChatCompletionRequestDto,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.pipeline.serve(chatAdapter, body, req, res);
  }
}
