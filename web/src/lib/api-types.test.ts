import { hasOption, ScalarType, type DescField, type DescFile, type DescMessage } from '@bufbuild/protobuf';
import type { ListUsersResponseSchema } from '@/gen/fairplay/v1/admin_pb';
import type { LoginResponseSchema, RefreshResponseSchema } from '@/gen/fairplay/v1/auth_pb';
import { decimal } from '@/gen/fairplay/v1/options_pb';
import type { UserSchema } from '@/gen/fairplay/v1/user_pb';
import { NUMERIC_FIELDS, type ApiJson } from './api-types';

const modules = import.meta.glob<Record<string, unknown>>('../gen/**/*_pb.ts', { eager: true });

const INT64 = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);

function isFile(value: unknown): value is DescFile {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'file';
}

/** isNumericOnApi: /api writes decimal strings and 64-bit integers as JSON numbers. */
function isNumericOnApi(field: DescField): boolean {
  const scalar =
    field.fieldKind === 'scalar'
      ? field.scalar
      : field.fieldKind === 'list' && field.listKind === 'scalar'
        ? field.scalar
        : undefined;
  if (scalar === undefined) return false;
  return (scalar === ScalarType.STRING && hasOption(field, decimal)) || INT64.has(scalar);
}

function allMessages(): Map<string, DescMessage> {
  const found = new Map<string, DescMessage>();
  const visit = (message: DescMessage) => {
    found.set(message.typeName, message);
    message.nestedMessages.forEach(visit);
  };
  for (const mod of Object.values(modules))
    for (const file of Object.values(mod).filter(isFile)) file.messages.forEach(visit);
  return found;
}

function nestedMessages(message: DescMessage): DescMessage[] {
  return message.fields.flatMap((field) =>
    field.fieldKind === 'message'
      ? [field.message]
      : field.fieldKind === 'list' && field.listKind === 'message'
        ? [field.message]
        : [],
  );
}

describe('NUMERIC_FIELDS', () => {
  const messages = allMessages();
  const registered = Object.keys(NUMERIC_FIELDS) as (keyof typeof NUMERIC_FIELDS)[];

  it.each(registered)('%s matches the descriptor', (name) => {
    const message = messages.get(name);
    expect(message, `${name} is not in src/gen: run bin/buf generate, or drop it from NUMERIC_FIELDS`).toBeDefined();
    if (!message) return;
    const numeric = message.fields
      .filter(isNumericOnApi)
      .map((field) => field.jsonName)
      .sort();
    expect(
      [...NUMERIC_FIELDS[name]].sort(),
      `The proto changed: set NUMERIC_FIELDS['${name}'] in src/lib/api-types.ts to [${numeric.map((f) => `'${f}'`).join(', ')}]`,
    ).toEqual(numeric);
  });

  it('registers every message nested in a registered one', () => {
    const missing = registered
      .flatMap((name) => {
        const message = messages.get(name);
        return message ? nestedMessages(message) : [];
      })
      .map((message) => message.typeName)
      .filter((name) => !(name in NUMERIC_FIELDS));
    expect(missing).toEqual([]);
  });
});

describe('ApiJson', () => {
  it('maps decimal and 64-bit fields to numbers and keeps the rest as generated', () => {
    type User = ApiJson<typeof UserSchema>;
    expectTypeOf<User['balance']>().toEqualTypeOf<number>();
    expectTypeOf<User['username']>().toEqualTypeOf<string>();
    expectTypeOf<User['isAdmin']>().toEqualTypeOf<boolean>();
    expectTypeOf<User['_id']>().toEqualTypeOf<string>();
    // proto3 `optional` stays optional.
    expectTypeOf<User>().toHaveProperty('createdAt').toEqualTypeOf<string | undefined>();

    type Login = ApiJson<typeof LoginResponseSchema>;
    expectTypeOf<Login['user']['balance']>().toEqualTypeOf<number>();
    expectTypeOf<Login['token']>().toEqualTypeOf<string>();

    type Users = ApiJson<typeof ListUsersResponseSchema>;
    expectTypeOf<Users['totalUsers']>().toEqualTypeOf<number>();
    expectTypeOf<Users['totalPages']>().toEqualTypeOf<number>();
    expectTypeOf<Users['users'][number]['balance']>().toEqualTypeOf<number>();

    type Refresh = ApiJson<typeof RefreshResponseSchema, 'user'>;
    expectTypeOf<Refresh['user']>().toEqualTypeOf<User | undefined>();
  });
});
