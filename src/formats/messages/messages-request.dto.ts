import {
  ArrayNotEmpty,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsString,
  Max,
  Min,
} from 'class-validator';
import { OptionalNotNull } from '../../common/validation/top-level.validation';

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
 * Optional fields are `@OptionalNotNull()`: the Messages API accepts no null for them (its
 * spec marks none of these nullable), so a null is a 400 naming the field.
 *
 * The fields `POST /v1/messages/count_tokens` reads (section 5.4 of wire-formats.md).
 * Validation checks only these; every other field is kept and forwarded.
 */
export class CountTokensRequestDto {
  @IsString() @IsNotEmpty() model!: string;
  @IsArray() @ArrayNotEmpty() messages!: MessagesMessage[];
  /** String or text blocks; checked by checkSystem. */
  @OptionalNotNull() system?: string | MessagesTextBlock[];
  @OptionalNotNull() @IsArray() tools?: MessagesTool[];
  @OptionalNotNull() @IsObject() tool_choice?: MessagesToolChoice;
  @OptionalNotNull() @IsObject() thinking?: MessagesThinking;
  @OptionalNotNull() @IsObject() output_config?: { effort?: string; [field: string]: unknown };
  [extra: string]: unknown;
}

/** The fields of a `POST /v1/messages` request the gateway reads. */
export class MessagesRequestDto extends CountTokensRequestDto {
  @IsInt() @Min(0) max_tokens!: number;
  @OptionalNotNull() @IsBoolean() stream?: boolean;
  @OptionalNotNull() @IsNumber() @Min(0) @Max(1) temperature?: number;
  @OptionalNotNull() @IsNumber() @Min(0) @Max(1) top_p?: number;
  @OptionalNotNull() @IsInt() @Min(0) top_k?: number;
  @OptionalNotNull() @IsArray() @IsString({ each: true }) stop_sequences?: string[];
  @OptionalNotNull() @IsObject() metadata?: { user_id?: string | null };
}
