/*
 * parse_cmd.c - `dsml-render parse`: a completion back into a message.
 */
#include "cli.h"

int cli_parse_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    cli_errorf("parse: not available yet");
    return CLI_EXIT_USAGE;
}
