import {
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
import { Generation } from '../shared/generation.guard';
import type { GenerationAdapter } from '../shared/generation.adapter';
import type { ResponsesRequestDto } from './responses-request.dto';
import { GenerationPipeline } from '../shared/generation.pipeline';
import { Planned, type RequestPlan } from '../shared/request-plan';
import { ownedResponsesAdapter } from './responses.adapter';
import { responsesFormat } from './responses.format';
import { ResponsesOwnership } from './responses.ownership';
import { StoredResponsesService } from './stored-responses.service';
import { ResponseRecorder } from './store/response-recorder';

/** OpenAI Responses API: `POST /v1/responses` (openai-family models), and stored responses. */
@Controller(responsesFormat.path)
@UseFilters(responsesFormat.filter)
export class ResponsesController {
  private readonly adapter: GenerationAdapter<ResponsesRequestDto>;

  constructor(
    private readonly pipeline: GenerationPipeline,
    private readonly stored: StoredResponsesService,
    private readonly ownership: ResponsesOwnership,
    recorder: ResponseRecorder,
  ) {
    this.adapter = ownedResponsesAdapter(ownership, recorder);
  }

  @Post()
  @HttpCode(200)
  @Generation(responsesFormat)
  create(
    @Planned() plan: RequestPlan<ResponsesRequestDto>,
    // The pipeline writes the answer (plan.res): declared so that Nest sends nothing itself.
    @Res() _res: GatewayResponse,
  ): Promise<void> {
    // Stored objects it continues from must be the key's own, checked before any upstream
    // call (at admission already when it named stored state: see ResponsesConversations).
    const checked =
      plan.key && !plan.stateResolved && this.ownership.checkContinuation(plan.body, plan.key);
    // The plan names the format's adapter; this one is it with the ownership records bound.
    return checked
      ? checked.then(() => this.pipeline.serve(plan, this.adapter))
      : this.pipeline.serve(plan, this.adapter);
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

  @Get(':id/input_items')
  @RequestLimits(storedResponseLimitFacts)
  inputItems(
    @Param('id') id: string,
    @Req() req: GatewayRequest,
    @Res() res: GatewayResponse,
  ): Promise<void> {
    return this.stored.forward('GET', id, req, res, 'input_items');
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
