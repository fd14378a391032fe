from citadel.cli import main

main(prog_name="citadel")
