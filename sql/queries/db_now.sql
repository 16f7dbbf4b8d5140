-- The server's clock: the instant an operator selection's age is measured from.
SELECT now() AS now
