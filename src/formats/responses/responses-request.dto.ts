import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
} from 'class-validator';

/** A content part of an input message (`input_text`, `input_image`, `output_text`, ...). */
export interface ResponsesContentPart {
  type: string;
  text?: string;
  image_url?: string;
  file_id?: string;
  detail?: string;
  refusal?: string;
  [extra: string]: unknown;
}

/** One item of `input`; shape-checked by checkInputItems, decoded by type. */
export interface ResponsesInputItem {
  type?: string;
  id?: string;
  role?: 'user' | 'assistant' | 'system' | 'developer';
  content?: string | ResponsesContentPart[];
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string | ResponsesContentPart[];
  summary?: { type: string; text: string }[];
  encrypted_content?: string | null;
  [extra: string]: unknown;
}

/** A tool as Responses clients declare it: function tools are flat. */
export interface ResponsesTool {
  type: string;
  name?: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  [extra: string]: unknown;
}

export interface ResponsesReasoningParam {
  effort?: string | null;
  summary?: string | null;
  generate_summary?: string | null;
  [extra: string]: unknown;
}

/**
 * The fields of a Responses request the gateway reads. Validation checks only these;
 * every other field is forwarded untouched (rule S2).
 */
export class ResponsesRequestDto {
  @IsString() @IsNotEmpty() model!: string;
  /** A string (one user message) or an array of input items; checked by hand. */
  @IsDefined() input!: string | ResponsesInputItem[];
  /** The system prompt; rule S1 also accepts a system or developer item in `input`. */
  @IsOptional() @IsString() instructions?: string | null;
  @IsOptional() @IsBoolean() stream?: boolean | null;
  @IsOptional() @IsInt() @Min(1) max_output_tokens?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number | null;
  @IsOptional() @IsArray() tools?: ResponsesTool[];
  @IsOptional() tool_choice?: unknown;
  @IsOptional() @IsBoolean() parallel_tool_calls?: boolean | null;
  @IsOptional() @IsObject() reasoning?: ResponsesReasoningParam | null;
  @IsOptional() @IsObject() text?: Record<string, unknown> | null;
  @IsOptional() @IsArray() @IsString({ each: true }) include?: string[] | null;
  @IsOptional() @IsObject() metadata?: Record<string, string> | null;
  @IsOptional() @IsBoolean() store?: boolean | null;
  @IsOptional() @IsString() previous_response_id?: string | null;
  @IsOptional() @IsBoolean() background?: boolean | null;
  [extra: string]: unknown;
}
