"""dokoro's tachibot bridge: research answers and plans from tachibot kept in dokoro's memory."""
