import { Controller, HttpCode, Post, Res, UseFilters } from '@nestjs/common';
import type { GatewayResponse } from '../../common/request-context';
import { Generation } from '../shared/generation.guard';
import { GenerationPipeline } from '../shared/generation.pipeline';
import { Planned, type RequestPlan } from '../shared/request-plan';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { chatCompletionsFormat } from './chat.format';

/** OpenAI Chat Completions: `POST /v1/chat/completions`, every catalog model. */
@Controller(chatCompletionsFormat.path)
@UseFilters(chatCompletionsFormat.filter)
export class ChatCompletionsController {
  constructor(private readonly pipeline: GenerationPipeline) {}

  @Post()
  @HttpCode(200)
  @Generation(chatCompletionsFormat)
  create(
    @Planned() plan: RequestPlan<ChatCompletionRequestDto>,
    // The pipeline writes the answer (plan.res): declared so that Nest sends nothing itself.
    @Res() _res: GatewayResponse,
  ): Promise<void> {
    return this.pipeline.serve(plan);
  }
}
