-- The server's version, as the console's status bar and `status --json` show it.
SELECT current_setting('server_version') AS server_version
