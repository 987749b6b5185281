-- What fired (issue 53): the rule's expression and the alert's labels, re-read when the
-- report is written so that its symptom line is the alert's own condition, holding or
-- resolved. NULL: no expression was known (no generatorURL, no PROMETHEUS_URL).
ALTER TABLE alert_analyses ADD COLUMN condition jsonb;
