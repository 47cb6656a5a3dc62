// Types of the JSON /api, derived from the protos' generated Json types
// (src/gen, protoc-gen-es json_types=true) so the compiler checks the client
// against the schema. The /api encoding differs from canonical proto JSON in
// two ways this module accounts for:
//  - every documented scalar field is always present, so fields are required;
//  - fields marked (fairplay.v1.money) are JSON numbers, not strings.

/**
 * JSON names of the fields that carry the (fairplay.v1.money) option (and the
 * names SPEC.md §7 gives to money fields of services not written yet).
 * api-types.test.ts fails when a proto marks a field as money that is missing here.
 */
export const MONEY_FIELDS = [
  'amount',
  'balance',
  'betAmount',
  'newBalance',
  'paidOut',
  'potentialWin',
  'totalWagered',
  'wagered',
  'wageredLastMonth',
  'wageredLastWeek',
  'winAmount',
] as const;

export type MoneyField = (typeof MONEY_FIELDS)[number];

type Wire<T> = T extends readonly (infer U)[]
  ? Wire<U>[]
  : T extends object
    ? { [K in keyof T]-?: K extends MoneyField ? number : Wire<NonNullable<T[K]>> }
    : T;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * ApiJson turns a generated Json type into the shape /api sends: fields
 * required, money as number. List proto3 `optional` fields and message
 * fields the server may omit in Optional.
 */
export type ApiJson<T, Optional extends keyof T = never> = Simplify<
  Omit<Wire<T>, Optional> & Partial<Pick<Wire<T>, Optional & keyof Wire<T>>>
>;

/** ApiRequest is the body a client sends: the same mapping, every field required. */
export type ApiRequest<T> = Wire<T>;
