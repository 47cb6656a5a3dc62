import type { Message } from '@bufbuild/protobuf';
import type { GenMessage } from '@bufbuild/protobuf/codegenv2';

// Types of the JSON /api, derived from the protos' generated code (src/gen,
// protoc-gen-es json_types=true) so the compiler checks the client against
// the schema. /api differs from canonical proto JSON in ways this module
// accounts for:
//  - every documented scalar field is always present, so fields are required
//    (proto3 `optional` fields stay optional);
//  - fields marked (fairplay.v1.decimal), e.g. User.balance, and 64-bit
//    integers are JSON numbers where the generated Json types say string.

/**
 * NUMERIC_FIELDS registers every message the web app exchanges with /api,
 * with the JSON names of its fields that /api sends as numbers while the
 * generated Json type says string. ApiJson accepts only registered messages,
 * and api-types.test.ts checks each entry against the descriptors, so a
 * proto change that affects the app fails the tests with the entry to write.
 */
export const NUMERIC_FIELDS = {
  // AuthService
  'fairplay.v1.ChangePasswordRequest': [],
  'fairplay.v1.ChangePasswordResponse': [],
  'fairplay.v1.DeviceInfo': [],
  'fairplay.v1.DisableTwoFactorRequest': [],
  'fairplay.v1.DisableTwoFactorResponse': [],
  'fairplay.v1.EnableTwoFactorRequest': [],
  'fairplay.v1.EnableTwoFactorResponse': [],
  'fairplay.v1.GetConfigResponse': [],
  'fairplay.v1.GetTwoFactorResponse': [],
  'fairplay.v1.GetUserResponse': [],
  'fairplay.v1.ListSessionsResponse': [],
  'fairplay.v1.LoginRequest': [],
  'fairplay.v1.LoginResponse': [],
  'fairplay.v1.LogoutRequest': [],
  'fairplay.v1.RefreshRequest': [],
  'fairplay.v1.RefreshResponse': [],
  'fairplay.v1.RegisterRequest': [],
  'fairplay.v1.RegisterResponse': [],
  'fairplay.v1.RevokeOtherSessionsRequest': [],
  'fairplay.v1.RevokeOtherSessionsResponse': [],
  'fairplay.v1.RevokeSessionRequest': [],
  'fairplay.v1.RevokeSessionResponse': [],
  'fairplay.v1.Session': [],
  'fairplay.v1.SetupTwoFactorResponse': [],
  'fairplay.v1.UpdatePreferencesRequest': [],
  'fairplay.v1.UpdatePreferencesResponse': [],
  'fairplay.v1.User': ['balance'],
  // AdminService
  'fairplay.v1.AdjustBalanceRequest': ['amount'],
  'fairplay.v1.AdjustBalanceResponse': [],
  'fairplay.v1.DeleteUserResponse': [],
  'fairplay.v1.GetUserLimitsResponse': [],
  'fairplay.v1.GameActivity': ['bets', 'paidOut', 'rtp', 'theoreticalRtp', 'wagered'],
  'fairplay.v1.GetActivityStatsResponse': ['activePlayers'],
  'fairplay.v1.GetUserStatsResponse': [
    'totalUsers',
    'usersLastMonth',
    'usersLastMonthPercentChange',
    'usersLastWeek',
    'usersLastWeekPercentChange',
  ],
  'fairplay.v1.GetWageringStatsResponse': [
    'totalWagered',
    'wageredLastMonth',
    'wageredLastMonthPercentChange',
    'wageredLastWeek',
    'wageredLastWeekPercentChange',
  ],
  'fairplay.v1.ListUsersResponse': ['totalUsers'],
  'fairplay.v1.SearchUsersResponse': ['totalUsers'],
  // GameService
  'fairplay.v1.Bet': ['amount', 'multiplier', 'payout'],
  'fairplay.v1.BlackjackGame': ['betAmount'],
  'fairplay.v1.BlackjackHands': ['betAmount'],
  'fairplay.v1.Card': [],
  'fairplay.v1.CashOutMinesRequest': [],
  'fairplay.v1.CashOutMinesResponse': ['multiplier', 'newBalance', 'winAmount'],
  'fairplay.v1.CashOutPumpRequest': [],
  'fairplay.v1.CashOutPumpResponse': ['multiplier', 'newBalance', 'winAmount'],
  'fairplay.v1.DoubleBlackjackRequest': [],
  'fairplay.v1.DoubleBlackjackResponse': ['betAmount', 'newBalance', 'winAmount'],
  'fairplay.v1.Fairness': ['nonce'],
  'fairplay.v1.GetActiveGamesResponse': [],
  'fairplay.v1.GetBetResponse': [],
  'fairplay.v1.HitBlackjackRequest': [],
  'fairplay.v1.HitBlackjackResponse': ['newBalance', 'winAmount'],
  'fairplay.v1.InsureBlackjackRequest': [],
  'fairplay.v1.InsureBlackjackResponse': ['newBalance', 'winAmount'],
  'fairplay.v1.ListBetsResponse': [],
  'fairplay.v1.MinesGame': ['betAmount', 'multiplier', 'nextMultiplier', 'potentialWin'],
  'fairplay.v1.PlayDiceRequest': ['betAmount', 'rollTarget'],
  'fairplay.v1.PlayDiceResponse': ['multiplier', 'newBalance', 'result', 'winAmount'],
  'fairplay.v1.PlayKenoRequest': ['betAmount'],
  'fairplay.v1.PlayKenoResponse': ['multiplier', 'newBalance', 'winAmount'],
  'fairplay.v1.PlayPlinkoRequest': ['betAmount'],
  'fairplay.v1.PlayPlinkoResponse': ['multiplier', 'newBalance', 'winAmount'],
  'fairplay.v1.PumpBalloonRequest': [],
  'fairplay.v1.PumpBalloonResponse': ['multiplier', 'newBalance', 'nextMultiplier', 'potentialWin', 'winAmount'],
  'fairplay.v1.PumpGame': ['betAmount', 'multiplier', 'nextMultiplier', 'potentialWin'],
  'fairplay.v1.RevealMinesTileRequest': [],
  'fairplay.v1.RevealMinesTileResponse': ['multiplier', 'newBalance', 'nextMultiplier', 'potentialWin', 'winAmount'],
  'fairplay.v1.SplitBlackjackRequest': [],
  'fairplay.v1.SplitBlackjackResponse': ['newBalance', 'winAmount'],
  'fairplay.v1.StandBlackjackRequest': [],
  'fairplay.v1.StandBlackjackResponse': ['newBalance', 'winAmount'],
  'fairplay.v1.StartBlackjackRequest': ['betAmount'],
  'fairplay.v1.StartBlackjackResponse': ['newBalance', 'winAmount'],
  'fairplay.v1.StartMinesRequest': ['betAmount'],
  'fairplay.v1.StartMinesResponse': ['multiplier', 'newBalance', 'nextMultiplier'],
  'fairplay.v1.StartPumpRequest': ['betAmount'],
  'fairplay.v1.StartPumpResponse': ['newBalance', 'nextMultiplier'],
  // FairnessService
  'fairplay.v1.GetSeedsResponse': [],
  'fairplay.v1.RotateSeedRequest': [],
  'fairplay.v1.RotateSeedResponse': ['previousNonce'],
  'fairplay.v1.SeedPair': ['nonce'],
  'fairplay.v1.SetClientSeedRequest': [],
  'fairplay.v1.SetClientSeedResponse': [],
  'fairplay.v1.VerifyBetResponse': ['nonce'],
  // LiveService
  'fairplay.v1.LiveBet': ['amount', 'multiplier', 'payout'],
  'fairplay.v1.WatchBetsResponse': [],
  // WalletService
  'fairplay.v1.ClaimTopUpResponse': ['amount', 'newBalance'],
  'fairplay.v1.ExcludeSelfRequest': [],
  'fairplay.v1.ExcludeSelfResponse': [],
  'fairplay.v1.GetLimitsResponse': [],
  'fairplay.v1.GetRealityCheckResponse': ['bets', 'net', 'wagered'],
  'fairplay.v1.GetTopUpResponse': ['amount', 'threshold'],
  'fairplay.v1.PendingLimits': [],
  'fairplay.v1.PeriodAmounts': ['day', 'month', 'week'],
  'fairplay.v1.PeriodUsage': ['netLoss', 'wagered'],
  'fairplay.v1.PlayLimits': [],
  'fairplay.v1.SetLimitsRequest': [],
  'fairplay.v1.SetLimitsResponse': [],
  'fairplay.v1.TakeBreakRequest': [],
  'fairplay.v1.TakeBreakResponse': [],
} as const satisfies Record<string, readonly string[]>;

/** RegisteredMessage names the messages ApiJson accepts. */
export type RegisteredMessage = keyof typeof NUMERIC_FIELDS;

type NumericKeys<Msg> = Msg extends { $typeName: infer N extends RegisteredMessage }
  ? (typeof NUMERIC_FIELDS)[N][number]
  : never;

type IsMessage<T> = T extends { $typeName: string } ? true : false;

/** The message-type counterpart of a Json field (same name unless json_name renames it). */
type MsgField<Msg, K> = K extends keyof Msg ? NonNullable<Msg[K]> : unknown;

// A nested message must be registered too; an unregistered one becomes never.
type WireField<M, J> = J extends readonly (infer JE)[]
  ? WireField<M extends readonly (infer ME)[] ? ME : unknown, JE>[]
  : IsMessage<M> extends true
    ? M extends { $typeName: RegisteredMessage }
      ? WireMessage<M, J>
      : never
    : J;

type NumberLike<J> = J extends readonly unknown[] ? number[] : number;

/** Keys that are proto3 `optional` scalars: optional in the message type and not messages. */
type OptionalKeys<Msg, Json> = {
  [K in keyof Json]-?: K extends keyof Msg
    ? object extends Pick<Msg, K>
      ? IsMessage<NonNullable<Msg[K]>> extends true
        ? never
        : K
      : never
    : never;
}[keyof Json];

type WireValue<Msg, Json, K extends keyof Json> =
  K extends NumericKeys<Msg> ? NumberLike<NonNullable<Json[K]>> : WireField<MsgField<Msg, K>, NonNullable<Json[K]>>;

type WireMessage<Msg, Json> = Simplify<
  { [K in Exclude<keyof Json, OptionalKeys<Msg, Json>>]-?: WireValue<Msg, Json, K> } & {
    [K in OptionalKeys<Msg, Json>]?: WireValue<Msg, Json, K>;
  }
>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** A generated schema of a registered message. */
export type RegisteredSchema = GenMessage<Message<RegisteredMessage>, { jsonType: unknown }>;

/**
 * ApiJson is the /api JSON shape of a generated message schema, e.g.
 * `ApiJson<typeof UserSchema>` (a type-only import of the schema is enough).
 * Message fields are required; list in Absent those the server may omit.
 */
export type ApiJson<Schema extends RegisteredSchema, Absent extends string = never> =
  Schema extends GenMessage<infer Msg extends Message, { jsonType: infer Json }>
    ? Simplify<
        Omit<WireMessage<Msg, Json>, Absent> &
          Partial<Pick<WireMessage<Msg, Json>, Absent & keyof WireMessage<Msg, Json>>>
      >
    : never;

/** ApiRequest is the /api JSON body of a generated request schema. */
export type ApiRequest<Schema extends RegisteredSchema> = ApiJson<Schema>;
