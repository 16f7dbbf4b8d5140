"""Fixed data and a frozen clock: the scenes the snapshot tests compare and the README's screenshots show."""
