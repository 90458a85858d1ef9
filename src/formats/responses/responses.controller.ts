import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  PipeTransform,
  Post,
  Req,
  Res,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import {
  responsesLimitFacts,
  storedResponseLimitFacts,
} from '../../limits/extractors/responses.limits';
import { RequestLimits } from '../../limits/request-limits.guard';
import { responsesProtections } from '../../policy/protections/extractors/responses.protections';
import { Protections } from '../../policy/protections/protections.guard';
import { RequireSystemPrompt, SystemPromptGuard } from '../../policy/system-prompt.guard';
import { responsesSystemPrompt } from '../../policy/system-prompt.rule';
import { OpenAiExceptionFilter } from '../openai/openai-exception.filter';
import { ResponsesRequestDto } from './responses-request.dto';
import { validateResponsesRequest } from './responses-request.validation';
import { ResponsesService } from './responses.service';
import { StoredResponsesService } from './stored-responses.service';

/** Validates the body in place (no copy) and types it. */
class ResponsesRequestPipe implements PipeTransform<unknown, ResponsesRequestDto> {
  transform(value: unknown): ResponsesRequestDto {
    return validateResponsesRequest(value);
  }
}

/** OpenAI Responses API: `POST /v1/responses` (openai-family models), and stored responses. */
@Controller('v1/responses')
@UseFilters(OpenAiExceptionFilter)
export class ResponsesController {
  constructor(
    private readonly service: ResponsesService,
    private readonly stored: StoredResponsesService,
  ) {}

  @Post()
  @HttpCode(200)
  @RequestLimits(responsesLimitFacts)
  @Protections(responsesProtections)
  @RequireSystemPrompt(responsesSystemPrompt)
  @UseGuards(SystemPromptGuard)
  create(
    @Body(new ResponsesRequestPipe()) body: ResponsesRequestDto,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.service.create(body, req, res);
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
