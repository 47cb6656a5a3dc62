-- An expand-only migration, for the real-node suite's release B
-- (hack/cluster-test.sh builds that tag with it): A -> B is an upgrade across a
-- migration, and rolling spec.image back from B to A then runs A against B's
-- newer schema, which expand/contract (docs/upgrades.md) makes safe: a new
-- table and a nullable column with no default, nothing A reads changes.
-- +goose Up
CREATE TABLE fairplay_cluster_expand (id bigint PRIMARY KEY, note text);
ALTER TABLE users ADD COLUMN fairplay_cluster_note text;
-- +goose Down
ALTER TABLE users DROP COLUMN fairplay_cluster_note;
DROP TABLE fairplay_cluster_expand;
