import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Req,
  Res,
  UseFilters,
} from '@nestjs/common';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { storedResponseLimitFacts } from './responses.limits';
import { RequestLimits } from '../../limits/request-limits.guard';
import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import { Generation } from '../shared/generation.guard';
import type { ResponsesRequestDto } from './responses-request.dto';
import { GenerationPipeline } from '../shared/generation.pipeline';
import { responsesAdapter } from './responses.adapter';
import { StoredResponsesService } from './stored-responses.service';

/** OpenAI Responses API: `POST /v1/responses` (openai-family models), and stored responses. */
@Controller('v1/responses')
@UseFilters(OpenAiExceptionFilter)
export class ResponsesController {
  constructor(
    private readonly pipeline: GenerationPipeline,
    private readonly stored: StoredResponsesService,
  ) {}

  @Post()
  @HttpCode(200)
  @Generation(responsesAdapter)
  create(
    // Validated in place by the generation guard.
    @Body() body: ResponsesRequestDto,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.pipeline.serve(responsesAdapter, body, req, res);
  }

  @Get(':id')
  @RequestLimits(storedResponseLimitFacts)
  retrieve(
    @Param('id') id: string,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.stored.forward('GET', id, req, res);
  }

  @Delete(':id')
  @RequestLimits(storedResponseLimitFacts)
  remove(
    @Param('id') id: string,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.stored.forward('DELETE', id, req, res);
  }
}
