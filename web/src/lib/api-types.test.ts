import { hasOption, type DescMessage, type DescFile } from '@bufbuild/protobuf';
import { money } from '@/gen/fairplay/v1/options_pb';
import { MONEY_FIELDS } from './api-types';

const modules = import.meta.glob<Record<string, unknown>>('../gen/**/*_pb.ts', { eager: true });

function isFile(value: unknown): value is DescFile {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'file';
}

function moneyFields(message: DescMessage): string[] {
  return [
    ...message.fields.filter((field) => hasOption(field, money)).map((field) => field.jsonName),
    ...message.nestedMessages.flatMap(moneyFields),
  ];
}

describe('MONEY_FIELDS', () => {
  it('lists every field the protos mark as money', () => {
    const files = Object.values(modules).flatMap((mod) => Object.values(mod).filter(isFile));
    expect(files.length).toBeGreaterThan(0);
    const marked = new Set(files.flatMap((file) => file.messages.flatMap(moneyFields)));
    expect(marked).toContain('balance');
    for (const name of marked) expect(MONEY_FIELDS).toContain(name);
  });
});
