% : include_next</ etc / passwd>
