-- An alert analysis's rounds (issue 51): "Investigate again" starts a new one. The round
-- keys the analysis's deep job (alert:<id>:<round>), so an analysis handed back by a
-- process that stopped continues its tree in the next process instead of starting over,
-- and its report's messages keep their outbox keys (posted once).
ALTER TABLE alert_analyses ADD COLUMN round integer NOT NULL DEFAULT 0;
