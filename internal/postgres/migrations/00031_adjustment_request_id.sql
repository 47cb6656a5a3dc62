-- +goose Up
-- A balance adjustment may carry the id of the request that means it
-- (AdjustBalanceRequest.request_id, a UUID the dashboard makes per
-- adjustment): the same administrator sending it again is answered with
-- the account and nothing changes again. Before this, a retried
-- adjustment (an answer lost to a proxy's timeout, the button pressed
-- again) credited twice, and only the audit log showed it (found by a
-- review).
--
-- The id is kept on the adjustment's audit row, unique per administrator.
-- admin_audit is written by administrators' actions and the operator's
-- commands alone, a few rows a day: building the index over it holds
-- their writes for a moment.
SET LOCAL lock_timeout = '5s';
ALTER TABLE admin_audit ADD COLUMN request_id uuid;
CREATE UNIQUE INDEX admin_audit_request_key ON admin_audit (actor_id, request_id) WHERE request_id IS NOT NULL;
COMMENT ON COLUMN admin_audit.request_id IS
    'The id the administrator''s client gave the request (a balance adjustment''s request_id): a second request with it '
    'is answered without acting again (migration 00031).';

-- +goose Down
DROP INDEX admin_audit_request_key;
ALTER TABLE admin_audit DROP COLUMN request_id;
