"""dokoro tracking server: issues, features, the week and task timers, as rows with markdown renderings."""
