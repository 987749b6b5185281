-- "🔁 Investigate again" (issue 30): the new report goes to the chat where the button was
-- pressed only; the other chats keep the report they have. NULL: a first investigation,
-- posted to every chat the alert routes to.
ALTER TABLE alert_analyses ADD COLUMN again_chat bigint;
