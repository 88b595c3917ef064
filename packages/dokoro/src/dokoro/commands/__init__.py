"""What the ``dokoro`` commands do, one module per command; :mod:`dokoro.cli` wires them up."""
