-- A migration that fails, for the real-node suite's broken release
-- (hack/cluster-test.sh builds one image tag with it): the migration Job of
-- that tag fails and the running version must keep serving.
-- +goose Up
SELECT fairplay_cluster_test_this_migration_fails();
-- +goose Down
SELECT 1;
