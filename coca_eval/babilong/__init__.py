"""BABILong: the bAbI reasoning tasks with their facts spread through long text (``coca-eval babilong``)."""
