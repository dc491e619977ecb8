"""From an Alertmanager alert storm to fabric incidents (issue 40): the webhook payload read,
each alert's labels mapped to a topology element, simultaneous alerts grouped by their nearest
shared element, one journaled incident per group. Headless: the workspace assembles it
(`fabtui.workspace.alerting`), `fabtui alerts` and the app are faces on it."""
