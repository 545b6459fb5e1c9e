#!/usr/bin/env python3
"""The redis-failover fault's stalled link: a TCP relay the replicas replicate through.

On SIGUSR1 it stops passing bytes either way while every connection stays open, as a network partition does
before any timeout: the master keeps its replicas connected and counts them as good until their last
acknowledgement is min-replicas-max-lag old (production: 10 s), so it keeps taking writes the replicas never
see. Closing the connections instead makes the master refuse writes at once (NOREPLICAS): nothing is lost.
The hold is never released: the drill kills the relay with the master, and what it held is gone.

    replication_hold.py LISTEN_PORT MASTER_PORT
"""
import asyncio
import signal
import sys

held = False


async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            if held:
                continue
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def main(listen: int, master: int) -> None:
    def hold() -> None:
        global held
        held = True

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, hold)

    async def connect(replica_reader: asyncio.StreamReader, replica_writer: asyncio.StreamWriter) -> None:
        try:
            master_reader, master_writer = await asyncio.open_connection("127.0.0.1", master)
        except OSError:
            replica_writer.close()
            return
        await asyncio.gather(relay(replica_reader, master_writer), relay(master_reader, replica_writer))

    server = await asyncio.start_server(connect, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
