import 'reflect-metadata';
import { plainToInstance, Type } from 'class-transformer';
import { IsInt, IsString, Min, ValidateNested, validateSync } from 'class-validator';
import { validationProblems } from './validation-problems';

class Price {
  @IsInt() @Min(0) input!: number;
}

class Model {
  @IsString() id!: string;
  @ValidateNested() @Type(() => Price) pricing!: Price;
}

class File {
  @ValidateNested({ each: true }) @Type(() => Model) models!: Model[];
  @IsInt() version!: number;
}

const problemsOf = (plain: object, prefix?: string): string[] =>
  validationProblems(validateSync(plainToInstance(File, plain)), prefix);

describe('validationProblems', () => {
  it('names each failed constraint by its path, array items by index', () => {
    expect(
      problemsOf({
        version: 'x',
        models: [
          { id: 'a', pricing: { input: 1 } },
          { id: 7, pricing: { input: -1 } },
        ],
      }),
    ).toEqual([
      'models[1].id: id must be a string',
      'models[1].pricing.input: input must not be less than 0',
      'version: version must be an integer number',
    ]);
  });

  it('puts the paths under a prefix and appends to what is there', () => {
    const out = ['earlier'];
    validationProblems(
      validateSync(plainToInstance(File, { models: [], version: 1.5 })),
      'file',
      out,
    );
    expect(out).toEqual(['earlier', 'file.version: version must be an integer number']);
  });

  it('finds nothing in a valid object', () => {
    expect(problemsOf({ version: 1, models: [{ id: 'a', pricing: { input: 0 } }] })).toEqual([]);
  });
});
