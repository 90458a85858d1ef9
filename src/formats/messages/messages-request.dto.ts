import {
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
} from 'class-validator';

/** A content block as clients send it; known types are shape-checked by the validation. */
export interface MessagesContentBlock {
  type: string;
  [field: string]: unknown;
}

export interface MessagesMessage {
  role: 'user' | 'assistant' | 'system';
  content: string | MessagesContentBlock[];
}

export interface MessagesTextBlock {
  type: 'text';
  text: string;
  [field: string]: unknown;
}

/** A tool: custom (`input_schema`) or a versioned server tool (`type` set, no schema). */
export interface MessagesTool {
  name: string;
  type?: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  strict?: boolean;
  [field: string]: unknown;
}

export type MessagesToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type MessagesThinking =
  | { type: 'enabled'; budget_tokens: number; display?: string }
  | { type: 'adaptive'; display?: string }
  | { type: 'disabled' };

/**
 * The fields `POST /v1/messages/count_tokens` reads (section 5.4 of wire-formats.md).
 * Validation checks only these; every other field is kept and forwarded.
 */
export class CountTokensRequestDto {
  @IsString() @IsNotEmpty() model!: string;
  @IsArray() @ArrayNotEmpty() messages!: MessagesMessage[];
  /** String or text blocks; checked by checkSystem. */
  @IsOptional() system?: string | MessagesTextBlock[];
  @IsOptional() @IsArray() tools?: MessagesTool[];
  @IsOptional() @IsObject() tool_choice?: MessagesToolChoice;
  @IsOptional() @IsObject() thinking?: MessagesThinking;
  @IsOptional() @IsObject() output_config?: { effort?: string; [field: string]: unknown };
  [extra: string]: unknown;
}

/** The fields of a `POST /v1/messages` request the gateway reads. */
export class MessagesRequestDto extends CountTokensRequestDto {
  @IsInt() @Min(0) max_tokens!: number;
  @IsOptional() @IsBoolean() stream?: boolean;
  @IsOptional() @IsNumber() @Min(0) @Max(1) temperature?: number;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number;
  @IsOptional() @IsInt() @Min(0) top_k?: number;
  @IsOptional() @IsArray() @IsString({ each: true }) stop_sequences?: string[];
  @IsOptional() @IsObject() metadata?: { user_id?: string | null };
}
