import asyncio
import socket

from citadel.server.listen import listening_socket


def test_accepted_connections_get_tcp_nodelay():
    """Without it, keep-alive responses written in two parts wait ~40 ms for a delayed ACK."""
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    seen: list[int] = []

    async def main() -> None:
        accepted = asyncio.Event()

        def on_connect(reader, writer):
            raw = writer.get_extra_info("socket")
            seen.append(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()
            accepted.set()

        server = await asyncio.start_server(on_connect, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            await asyncio.wait_for(accepted.wait(), 10)
            writer.close()

    asyncio.run(main())
    assert seen and seen[0] != 0
