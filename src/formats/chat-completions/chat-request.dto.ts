import {
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  ArrayNotEmpty,
} from 'class-validator';

/** A chat message as clients send it; shape-checked by checkChatMessages. */
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
  [extra: string]: unknown;
}

export interface ChatContentPart {
  type: string;
  text?: string;
  image_url?: { url: string; detail?: string };
  [extra: string]: unknown;
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatTool {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: Record<string, unknown>;
    strict?: boolean;
  };
}

/**
 * The fields of a chat completion request the gateway reads. Validation checks only
 * these; every other field is forwarded untouched (rule S2).
 */
export class ChatCompletionRequestDto {
  @IsString() @IsNotEmpty() model!: string;
  @IsArray() @ArrayNotEmpty() messages!: ChatMessage[];
  @IsOptional() @IsBoolean() stream?: boolean | null;
  @IsOptional() @IsObject() stream_options?: { include_usage?: boolean } | null;
  @IsOptional() @IsInt() @Min(1) max_tokens?: number | null;
  @IsOptional() @IsInt() @Min(1) max_completion_tokens?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(2) temperature?: number | null;
  @IsOptional() @IsNumber() @Min(0) @Max(1) top_p?: number | null;
  @IsOptional() @IsInt() @Min(1) @Max(128) n?: number | null;
  @IsOptional() @IsArray() tools?: ChatTool[];
  @IsOptional() tool_choice?: unknown;
  @IsOptional() @IsBoolean() parallel_tool_calls?: boolean;
  @IsOptional()
  @IsIn(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])
  reasoning_effort?: string | null;
  @IsOptional() stop?: string | string[] | null;
  @IsOptional() @IsObject() metadata?: Record<string, string> | null;
  @IsOptional() @IsObject() response_format?: Record<string, unknown>;
  @IsOptional() @IsString() user?: string;
  [extra: string]: unknown;
}
