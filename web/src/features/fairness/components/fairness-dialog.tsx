import { useState } from 'react';
import { BetDetails } from '@/components/bets/bet-details';
import { Dialog, DialogContent } from '@/components/ui/dialog';
import { Tabs, TabsContent, TabsList, TabsTrigger } from '@/components/ui/tabs';
import { useUser } from '@/lib/auth';
import { BetsPanel } from './bets-panel';
import styles from './fairness.module.css';
import { SeedsPanel } from './seeds-panel';

/** FairnessDialog is the provably-fair panel of every game screen. */
export default function FairnessDialog({ onClose }: { onClose: () => void }) {
  const user = useUser().data;
  const [tab, setTab] = useState('seeds');
  const [betId, setBetId] = useState<string | null>(null);
  return (
    <Dialog
      open
      onOpenChange={(open) => {
        if (!open) onClose();
      }}
    >
      <DialogContent
        title="Fairness"
        size="lg"
        description="Every result comes from your seeds. Rotate the pair to reveal the server seed and verify any bet here in your browser."
      >
        {user ? (
          <Tabs value={tab} onValueChange={setTab} className={styles.tabs}>
            <TabsList aria-label="Fairness">
              <TabsTrigger value="seeds">Seeds</TabsTrigger>
              <TabsTrigger value="bets">My Bets</TabsTrigger>
            </TabsList>
            <TabsContent value="seeds">
              <SeedsPanel />
            </TabsContent>
            <TabsContent value="bets">
              {betId ? (
                <BetDetails
                  betId={betId}
                  onBack={() => {
                    setBetId(null);
                  }}
                />
              ) : (
                <BetsPanel onOpen={setBetId} />
              )}
            </TabsContent>
          </Tabs>
        ) : (
          <p className={styles.muted}>Please login to view your seeds and bets.</p>
        )}
      </DialogContent>
    </Dialog>
  );
}
